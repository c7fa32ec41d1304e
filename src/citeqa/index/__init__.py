"""The index folder: manifest, storage and incremental building."""
