"""Everything that talks to GitHub: App auth, the REST gateway (PyGithub), git mirrors,
the alignment-PR lifecycle, sticky comments, check runs and workflow-run evidence."""
