"""cdem"""
