"""smdebug.core's public names that smd provides."""
