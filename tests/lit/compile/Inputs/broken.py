import shardc

x = 1
raise ValueError("bad configuration")
