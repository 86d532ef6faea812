import shardc  # noqa: F401 - as a real script would

VALUE = 3
