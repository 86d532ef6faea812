import shardc  # noqa: F401 - as a real script would

x = 1
raise ValueError("bad configuration")
