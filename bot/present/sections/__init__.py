"""The sections of the alignment PR body, one module each; :mod:`bot.present.pr_text` composes
them (title, intro and summary, the generated command, validation and the regression matrix,
the runtime evidence, the collapsed lists). The footer and metadata line that frame the body
are :mod:`bot.present.posted`'s."""
