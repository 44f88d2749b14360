mod bridge;
