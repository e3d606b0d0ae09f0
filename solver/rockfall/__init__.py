"""rockfall"""
