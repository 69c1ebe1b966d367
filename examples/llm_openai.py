"""LLM serving: a small open model behind KServe's LLMInferenceService (vLLM on a GPU, requests
spread over its replicas by the inference gateway's endpoint picker), queried with the OpenAI
client.

    python examples/llm_openai.py deploy      # an LLMInferenceService "chat" in your namespace
    python examples/llm_openai.py query "What does the platform do?"
    python examples/llm_openai.py delete
    python examples/llm_openai.py health-check --name NAME   # behind GKE Inference Gateway: the pool
                                              # health check of a service you made another way
    python examples/llm_openai.py --local     # offline on CPU: a tiny model trained here, served over
                                              # the OpenAI API, queried with the same client

Deploy: the service runs vLLM (`vllm serve`, KServe's `kserve-config-llm-template` preset) on one
GPU of your team's quota; Kueue queues it like a GPU notebook. The model comes from `--model-uri`:
`pvc://team-models/<folder>` is your team bucket (GCS FUSE, read-only; copy a model there with
`gcloud storage cp -r`), `hf://<org>/<model>` downloads from Hugging Face at start. KServe v0.20.0
reads no `gs://` URI for an LLMInferenceService (pkg/controller/v1alpha2/llmisvc/
workload_storage.go: pvc, oci, hf and s3 only), hence the volume. `router` asks for KServe's
defaults: an HTTPRoute on the platform's gateway at /<namespace>/<name>/v1/..., an InferencePool
and its endpoint picker, which sends each request to the replica with the shortest queue and the
emptiest KV cache.

Behind GKE Inference Gateway (the platform's `inferenceGateway.provider: gke`), GKE's load balancer
sends to the service's InferencePool only while its own health check passes, and KServe makes none;
the platform publishes the check on your team's `team-llm` config, and `deploy` makes it for the
pool KServe names (a HealthCheckPolicy owned by the service, so `delete` removes it too). A service
you make another way (kubectl, the KServe SDK) gets it from `health-check --name <service>`;
without it GKE sends the service nothing.

Query: from a notebook of your team the service answers at its in-cluster address (no sign-in:
the namespace's own traffic); from elsewhere through the gateway at the URL in the service's
status, with a token of your team in `OPENAI_API_KEY` (docs/serving.md, "LLMs").

Local: KServe 0.20.0's own model server cannot serve the OpenAI API without vLLM (its
kserve/protocol/rest/openai/types import vLLM's request and response classes, and vLLM 0.24.0, the
`kserve[llm]` extra, needs another torch than the platform's and a GPU build). So the local run
serves the model with Hugging Face transformers' OpenAI-compatible server (`transformers serve`,
the pinned transformers' `serving` extra) from a model folder laid out as vLLM reads /mnt/models
(config.json, model.safetensors, tokenizer files), and queries it with the OpenAI client exactly
as a notebook queries the cluster.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

NAME = "chat"
QUESTION = "what does the platform do?"
ANSWER = "the platform serves models to every team"
"""What the local run teaches its tiny model, and then asks it over the OpenAI API."""
DEFAULT_MODEL_URI = "hf://Qwen/Qwen2.5-0.5B-Instruct"
API_GROUP = "serving.kserve.io"
API_VERSION = "v1alpha2"
PLURAL = "llminferenceservices"
VLLM_PORT = 8000
"""`vllm serve --port 8000` in KServe v0.20.0's presets; the workload Service's port."""
TEAM_LLM = "team-llm"
POOL_HEALTH_CHECK_ANNOTATION = "mlplatform.io/gke-pool-health-check"
"""On `team-llm` behind GKE Inference Gateway: the health check of each service's InferencePool."""


def namespace() -> str:
    """The notebook's own namespace (its service account's), else $NAMESPACE."""
    path = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
    return path.read_text().strip() if path.is_file() else os.environ["NAMESPACE"]


def llm_service(name: str, model_uri: str, gpus: int = 1, replicas: int = 1) -> dict[str, Any]:
    """The LLMInferenceService: the model, one `main` container with its GPUs (merged into KServe's
    vLLM preset by container name), the team's own settings (`baseRefs`: the platform's
    `team-llm` config in your namespace: no mesh sidecar, the GPU nodes' taint tolerated, on GKE
    the account and GCS Fuse of your team bucket; a multi-node service with `worker` names
    `team-llm-workers` too), and KServe's default route, gateway and scheduler."""
    resources = {"nvidia.com/gpu": str(gpus)}
    return {
        "apiVersion": f"{API_GROUP}/{API_VERSION}",
        "kind": "LLMInferenceService",
        # Kueue reads a job's priority class from the object it queues: a multi-node replica's
        # LeaderWorkerSet, which KServe gives the service's kueue.x-k8s.io labels (a single-node
        # replica's pod gets the label from the team's `team-llm` config).
        "metadata": {"name": name, "labels": {"kueue.x-k8s.io/priority-class": "interactive"}},
        "spec": {
            "model": {"uri": model_uri, "name": name},
            "replicas": replicas,
            "baseRefs": [{"name": TEAM_LLM}],
            "template": {"containers": [{"name": "main", "resources": {"requests": resources, "limits": resources}}]},
            "router": {"route": {}, "gateway": {}, "scheduler": {}},
        },
    }


def child_name(parent: str, suffix: str) -> str:
    """The name KServe gives a service's child object (knative.dev/pkg kmeta.ChildName, as
    kserve v0.20.0 pins it, for a suffix of at most 30): `parent + suffix` if it fits 63
    characters, else the parent cut short, its md5 and the suffix."""
    if len(parent) + len(suffix) <= 63:
        return parent + suffix
    return parent[: 31 - len(suffix)] + hashlib.md5(parent.encode()).hexdigest() + suffix


def pool_health_check_policy(service: dict[str, Any], team_config: dict[str, Any]) -> dict[str, Any] | None:
    """The HealthCheckPolicy of the service's InferencePool (`<name>-inference-pool`: kserve v0.20.0
    llmisvc/scheduler.go expectedSchedulerInferencePool), as the team's config publishes it; None
    where it publishes none (the gateway is not GKE's). Owned by the service: deleted with it."""
    published = (team_config.get("metadata", {}).get("annotations") or {}).get(POOL_HEALTH_CHECK_ANNOTATION)
    if not published:
        return None
    meta = service["metadata"]
    pool = child_name(meta["name"], "-inference-pool")
    owner = {"apiVersion": service["apiVersion"], "kind": service["kind"], "name": meta["name"], "uid": meta["uid"]}
    return {
        "apiVersion": "networking.gke.io/v1",
        "kind": "HealthCheckPolicy",
        "metadata": {"name": pool, "namespace": meta["namespace"], "ownerReferences": [owner]},
        "spec": {"targetRef": {"group": "inference.networking.k8s.io", "kind": "InferencePool", "name": pool}, "default": json.loads(published)},
    }


def make_pool_health_check(api: Any, service: dict[str, Any]) -> None:
    """The service's pool health check where the team's config publishes one (GKE Inference Gateway).
    One of that name left from an earlier service of the same name (its deletion not yet collected)
    or made by hand is replaced and so owned by this service: created again, it would be refused,
    and collected with the old service, leaving this one without a check."""
    from kubernetes.client.rest import ApiException

    meta = service["metadata"]
    team_config = api.get_namespaced_custom_object(API_GROUP, API_VERSION, meta["namespace"], "llminferenceserviceconfigs", TEAM_LLM)
    policy = pool_health_check_policy(service, team_config)
    if policy is None:
        print(f"no pool health check to make: your team's {TEAM_LLM} config publishes none (the gateway is not GKE's)")
        return
    where = ("networking.gke.io", "v1", meta["namespace"], "healthcheckpolicies")
    try:
        try:
            api.create_namespaced_custom_object(*where, policy)
        except ApiException as error:
            if error.status != 409:
                raise
            current = api.get_namespaced_custom_object(*where, policy["metadata"]["name"])
            policy["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
            api.replace_namespaced_custom_object(*where, policy["metadata"]["name"], policy)
    except ApiException as error:
        # 403: not an editor of the team; 404: the cluster serves no HealthCheckPolicy (its Gateway
        # API is off). The service is made already: say so and how to finish, no traceback.
        raise SystemExit(
            f"{meta['name']} is deployed, but its HealthCheckPolicy {policy['metadata']['name']} could not be made "
            f"(HTTP {error.status} {error.reason}): GKE's load balancer will find its model servers unhealthy and send it "
            f"nothing. An editor of {meta['namespace']} runs `python examples/llm_openai.py health-check --name {meta['name']}`; "
            "a 404 means the cluster's Gateway API is off (docs/serving.md, GKE Inference Gateway)."
        ) from None
    print(f"made HealthCheckPolicy {policy['metadata']['name']} (GKE's load balancer checks {meta['name']}'s model servers on /health)")


def health_check(name: str) -> None:
    """The pool health check of a service made another way (kubectl, the KServe SDK, a script)."""
    from kubernetes import client, config

    config.load_config()
    api = client.CustomObjectsApi()
    make_pool_health_check(api, api.get_namespaced_custom_object(API_GROUP, API_VERSION, namespace(), PLURAL, name))


def deploy(name: str, model_uri: str, gpus: int) -> None:
    from kubernetes import client, config

    config.load_config()
    api = client.CustomObjectsApi()
    service = api.create_namespaced_custom_object(API_GROUP, API_VERSION, namespace(), PLURAL, llm_service(name, model_uri, gpus))
    make_pool_health_check(api, service)
    print(f"created LLMInferenceService {name}; waiting until it is ready (the GPU, then the model loading)")
    while True:
        status = api.get_namespaced_custom_object(API_GROUP, API_VERSION, namespace(), PLURAL, name).get("status", {})
        ready = {c["type"]: c for c in status.get("conditions", [])}.get("Ready", {})
        if ready.get("status") == "True":
            print(f"ready at {status.get('url')}")
            return
        print(f"  not ready: {ready.get('reason', 'pending')} {ready.get('message', '')}".rstrip())
        time.sleep(15)


def delete(name: str) -> None:
    from kubernetes import client, config

    config.load_config()
    client.CustomObjectsApi().delete_namespaced_custom_object(API_GROUP, API_VERSION, namespace(), PLURAL, name)
    print(f"deleted LLMInferenceService {name} (and what it owns: its pool's health check on GKE)")


def in_cluster_url(name: str) -> str:
    """The service's workload Service (KServe: `<name>-kserve-workload-svc`), OpenAI API under /v1."""
    return f"http://{name}-kserve-workload-svc.{namespace()}.svc.cluster.local:{VLLM_PORT}/v1"


def ask(base_url: str, model: str, question: str, api_key: str = "none", max_tokens: int = 32) -> str:
    """One chat completion through the OpenAI client; greedy, so the answer is the model's best."""
    from openai import OpenAI

    reply = OpenAI(base_url=base_url, api_key=api_key).chat.completions.create(
        model=model, messages=[{"role": "user", "content": question}], max_tokens=max_tokens, temperature=0
    )
    print(f"usage: {reply.usage.prompt_tokens} prompt + {reply.usage.completion_tokens} completion tokens" if reply.usage else "")
    return reply.choices[0].message.content or ""


# --- the local run --------------------------------------------------------------------------------


def build_tiny_model(folder: Path, steps: int = 60) -> None:
    """A Qwen2-architecture model small enough for a CPU (64 wide, 2 layers) and its tokenizer,
    both made here without a download: a byte-level BPE trained on two sentences, a chat template,
    and a few steps of training so that it answers QUESTION with ANSWER. Saved as vLLM reads a
    model folder."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=300,
        special_tokens=["<|im_start|>", "<|im_end|>", "<|endoftext|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    bpe.train_from_iterator([QUESTION, ANSWER] * 4, trainer)
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=bpe, eos_token="<|im_end|>", pad_token="<|endoftext|>")
    tokenizer.chat_template = (
        "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
        "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
    )
    torch.manual_seed(0)
    config = Qwen2Config(
        vocab_size=len(tokenizer),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=512,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        tie_word_embeddings=True,
    )
    model = Qwen2ForCausalLM(config)
    conversation = [{"role": "user", "content": QUESTION}, {"role": "assistant", "content": ANSWER}]
    batch = tokenizer(tokenizer.apply_chat_template(conversation, tokenize=False), return_tensors="pt")
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    losses = []
    for _ in range(steps):
        loss = model(**batch, labels=batch["input_ids"]).loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    print(f"loss {losses[0]:.4f} -> {losses[-1]:.4f}")
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    print(f"model written to {folder}: {', '.join(sorted(p.name for p in folder.iterdir()))}")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_until_healthy(url: str, server: subprocess.Popen[str], timeout_s: float = 180) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"the model server exited ({server.returncode}):\n{(server.stdout.read() if server.stdout else '')[-3000:]}")
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            time.sleep(0.5)
    raise SystemExit(f"the model server did not answer {url} within {timeout_s:.0f} s")


def run_local() -> None:
    """Train, serve over the OpenAI API on 127.0.0.1, ask, stop the server."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "model"
        build_tiny_model(folder)
        port = free_port()
        cache = Path(tmp) / "hf-cache"
        cache.mkdir()
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_HUB_CACHE": str(cache), "TRANSFORMERS_VERBOSITY": "error"}
        command = ["serve", str(folder), "--host", "127.0.0.1", "--port", str(port), "--device", "cpu"]
        server = subprocess.Popen(
            [sys.executable, "-m", "transformers.cli.transformers", *command],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )
        try:
            wait_until_healthy(f"http://127.0.0.1:{port}/health", server)
            print(f"serving {folder.name} over the OpenAI API at http://127.0.0.1:{port}/v1")
            answer = ask(f"http://127.0.0.1:{port}/v1", str(folder), QUESTION, max_tokens=12)
            print(f"asked {QUESTION!r}")
            print(f"answer {answer!r}")
        finally:
            server.terminate()
            server.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--local", action="store_true", help="train, serve and query a tiny model on this machine")
    parser.add_argument("step", nargs="?", choices=["deploy", "query", "delete", "health-check"])
    parser.add_argument("question", nargs="?", default=QUESTION)
    parser.add_argument("--name", default=NAME)
    parser.add_argument("--model-uri", default=DEFAULT_MODEL_URI, help="pvc://team-models/<folder> or hf://<org>/<model>")
    parser.add_argument("--gpus", type=int, default=1)
    parser.add_argument("--base-url", help="default: the service's in-cluster address; the gateway URL from outside")
    args = parser.parse_args()
    if args.local:
        run_local()
    elif args.step == "deploy":
        deploy(args.name, args.model_uri, args.gpus)
    elif args.step == "query":
        print(ask(args.base_url or in_cluster_url(args.name), args.name, args.question, os.environ.get("OPENAI_API_KEY", "none")))
    elif args.step == "delete":
        delete(args.name)
    elif args.step == "health-check":
        health_check(args.name)
    else:
        parser.error("say deploy, query, delete or health-check, or --local")


if __name__ == "__main__":
    main()
