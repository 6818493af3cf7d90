"""Building and running the recipe-sync image where no image registry is reachable."""
