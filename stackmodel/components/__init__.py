"""Each component as the stack model knows it, one module per component: the model of its
settings (`mlplatform:components.<key>`), its own rules, and its spec (spec.py ComponentSpec:
its needs, its default, its pins). The module that installs it has the same name in
components/; the list of them is stackmodel/registry.py."""
