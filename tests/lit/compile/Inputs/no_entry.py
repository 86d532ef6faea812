import shardc

VALUE = 3
