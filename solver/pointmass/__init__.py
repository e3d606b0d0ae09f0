"""pointmass"""
