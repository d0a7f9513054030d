"""agenthop.runner"""
