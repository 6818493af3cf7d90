"""Service state: the SQLAlchemy tables, the store of atomic transitions, migrations."""
