"""Every YAML reader of the project, bounded after alias expansion (:mod:`bot.yamlio.bounds`):
round-trip with positions for rules and configs whose errors name a line
(:mod:`~bot.yamlio.positions`), the recipes builder's js-yaml semantics
(:mod:`~bot.yamlio.yaml12`), with many documents parsed on two CPUs for the CLI's render
(:mod:`~bot.yamlio.twoway`), and plain safe data (:mod:`~bot.yamlio.safe`). The recipe
editor composes nodes itself (:mod:`bot.recipes.edit`): it needs byte offsets, not data."""
