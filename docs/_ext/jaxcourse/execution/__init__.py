"""Running a page and reading what its kernel recorded: the parser, the record, every failure located, the change
report's comparison, the scheduling of pages over processes."""
