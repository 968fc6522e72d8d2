"""Matrix products and linear algebra."""
