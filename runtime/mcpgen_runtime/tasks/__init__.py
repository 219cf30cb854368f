"""Tasks: the task table, the task store interface and its in-process and Redis stores."""
