"""The `recipe-sync` command line: `main` and one module per subcommand."""
