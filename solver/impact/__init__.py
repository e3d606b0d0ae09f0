"""impact"""
