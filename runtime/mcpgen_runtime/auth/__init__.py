"""Authorization over HTTP, the parts that need no I/O: what a verified access token
says (``tokens``), which scopes each tool needs (``scopes``), the challenges and the
protected-resource metadata document (``challenge``), and JWT checks on a key set
(``jwt``). The HTTP shell (``http.oauth``, ``http.verifiers``) does the fetching."""
