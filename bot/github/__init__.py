"""Everything that talks to GitHub: App auth and the REST gateway (one client: githubkit's
auth on httpx, bot/github/client.py), git mirrors, the alignment-PR lifecycle, sticky
comments, check runs and workflow-run evidence."""
