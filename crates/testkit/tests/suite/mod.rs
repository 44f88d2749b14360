mod anthropic;
