"""Marshmallow schemas for every body that enters or leaves the HTTP API."""
