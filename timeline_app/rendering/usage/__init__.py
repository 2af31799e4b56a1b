"""What a render costs (pure): the prompt-cache forecast, reported usage, prices in exact decimals."""
