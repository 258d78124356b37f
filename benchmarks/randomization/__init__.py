"""What physics randomisation costs at reset, mid-episode and in a push."""
