"""The contract compatibility rules: how two lists of tool descriptors differ, and what breaks."""
