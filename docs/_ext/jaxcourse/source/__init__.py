"""What a page is, read before anything runs: front matter, block structure, cells and their lines, the notebook
reader, the environment fingerprint, located problems."""
