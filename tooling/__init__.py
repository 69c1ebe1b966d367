"""What acts on a stack: the offline plan under Pulumi's mocks, render and full render,
`check`, cost, the reference, the graph, and the live smoke test. `python -m mlplatform …`
(mlplatform/__main__.py; `python -m stacks …` its alias) runs their command line, tooling/cli.py."""
