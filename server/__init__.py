"""agenthop.server"""
