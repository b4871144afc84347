extra = 1
