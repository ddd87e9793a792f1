"""What makes a record trustworthy: the audit hash chain and its order, decision seals,
and the claim fence."""
