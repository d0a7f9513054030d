"""agenthop.scorer"""
