"""Finding and loading CANN, its constants, and the table of C prototypes."""
