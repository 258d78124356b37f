"""What one step costs: round trips, where the time goes, per-step checks, idle CPU."""
