"""The GitHub App: composition root, webhook app, queue tasks, dispatch, the sync job,
the reconciler and the whole PR lifecycle (alignment PRs, check runs, sticky comments,
dashboard issue)."""
