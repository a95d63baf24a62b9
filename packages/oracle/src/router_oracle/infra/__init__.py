"""The oracle's shared infrastructure, used by all three packages: atomic files, the frozen
model base, numeric options, one-line validation messages, text and hash helpers, the CLI runner and config
flag, the console entry point, the input error and how reports write numbers."""
