"""Agreement with what recipe maintainers actually did (issue #24).

A benchmark PR replayed through the engine proposes YAML edits; the recipes history says what
the maintainers changed afterwards. This package turns both sides into comparable *leaves*
(one launch setting at one recipe node), links maintainer commits to the benchmark PRs they
follow or anticipate, and scores each proposal and each linked change.
"""
