"""A real nginx for the Ray dashboard's token proxy (components/profiles/ray.py): the rendered
template put through what the nginx image's entrypoint does with it, then loaded by Debian's nginx
(`nginx -t`, or served on loopback). Standard library only: the examples' virtualenv imports it too.

What the image does (nginx/docker-nginx, the entrypoint's 20-envsubst-on-templates.sh): every
/etc/nginx/templates/<f>.template becomes /etc/nginx/conf.d/<f> through GNU envsubst, given the
names of the defined variables that NGINX_ENVSUBST_FILTER matches; the image's nginx.conf includes
conf.d/*.conf inside `http {}`. The main configuration here does the same include and keeps
nginx's own files (pid, logs, temporary files) in the test's folder, so nginx needs no root.
Debian ships 1.22; the image runs 1.30: every directive the template uses is older than both."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

INSTALL = "apt-get install nginx gettext-base (Debian's nginx and envsubst; .ci/run installs them)"


def nginx_binary() -> str | None:
    """Debian's nginx is in /usr/sbin, outside a normal user's PATH."""
    return shutil.which("nginx") or shutil.which("nginx", path="/usr/sbin:/usr/local/sbin")


def required_in_ci() -> bool:
    """Under CI=true (.ci/run installs nginx) a missing nginx fails the test instead of skipping it."""
    return os.environ.get("CI", "").lower() in ("true", "1")


def envsubst_like_the_image(template: str, env: dict[str, str]) -> str:
    """The entrypoint's substitution: GNU envsubst given `${NAME}` for each variable of `env` that
    NGINX_ENVSUBST_FILTER matches (every defined one without a filter), so nginx's own `$host`
    and the like stay as they are."""
    pattern = env.get("NGINX_ENVSUBST_FILTER", "")
    names = sorted(name for name in env if re.search(pattern, name))
    envsubst = shutil.which("envsubst")
    if envsubst is None:
        raise FileNotFoundError(f"no envsubst: {INSTALL}")
    run = subprocess.run(
        [envsubst, " ".join(f"${{{name}}}" for name in names)],
        input=template, capture_output=True, text=True, env=env, check=True,
    )
    return run.stdout


def main_config(folder: Path, conf_d: dict[str, str]) -> Path:
    """Write conf.d/ and an nginx.conf that includes it inside `http {}` as the image's does, with
    nginx's own files under `folder`; returns the nginx.conf."""
    (folder / "conf.d").mkdir(parents=True, exist_ok=True)
    for name, text in conf_d.items():
        (folder / "conf.d" / name).write_text(text)
    temp = {key: folder / key for key in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")}
    config = folder / "nginx.conf"
    config.write_text(
        "daemon off;\nmaster_process off;\nworker_processes 1;\n"
        f"pid {folder / 'nginx.pid'};\nerror_log {folder / 'error.log'} notice;\n"
        "events { worker_connections 64; }\n"
        "http {\n    access_log off;\n"
        + "".join(f"    {key}_temp_path {path};\n" for key, path in temp.items())
        + f"    include {folder / 'conf.d'}/*.conf;\n}}\n"
    )
    return config


def check(nginx: str, config: Path) -> subprocess.CompletedProcess[str]:
    """`nginx -t` of `config`: nginx parses it and opens what it names, as at start."""
    return subprocess.run(
        [nginx, "-t", "-p", str(config.parent), "-e", str(config.parent / "error.log"), "-c", str(config)],
        capture_output=True, text=True, timeout=60,
    )


def start(nginx: str, config: Path) -> subprocess.Popen[str]:
    """nginx in the foreground, one process, on `config`; the caller stops it."""
    return subprocess.Popen(
        [nginx, "-p", str(config.parent), "-e", str(config.parent / "error.log"), "-c", str(config)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
