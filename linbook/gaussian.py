"""Chapter module (being written): see linbook/__init__.py for what it will hold."""

__all__ = []
