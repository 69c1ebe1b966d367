"""Facts as data, importing nothing else from the repo: the upstream pin table, the GPU
catalog, the labels and taints GPU nodes carry, list prices, and naming rules. Every other
layer reads them; each fact has one home here."""
