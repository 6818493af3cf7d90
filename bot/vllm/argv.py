"""The flag reader moved to :mod:`bot.argv` (the shell layer below reads flags too); this
name stays only for ``bot/present`` until its split lands, then goes."""

from bot.argv import flag_value, option_name

__all__ = ["flag_value", "option_name"]
