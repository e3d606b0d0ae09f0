"""contact_laws"""
