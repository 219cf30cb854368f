"""The server side: the tool table, the sans-I/O server core and the stdio shell."""
