"""The faces of pentadice: the command line (one module per command), the terminal game, the web API and page,
and every sentence a player reads. They parse and format; the work is done by the layers below.
"""
