"""Alignment: map launch lines to recipe profiles, compare, plan edits, write PR text.

Entry points: :func:`bot.align.run.align` (``AlignInputs`` → ``AlignRun``), the ``align`` CLI
(:mod:`bot.commands.align`) and :class:`bot.service.engine.AlignEngine`. See ``README.md`` here and
``docs/alignment.md``.
"""
