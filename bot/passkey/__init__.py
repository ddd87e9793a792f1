"""The passkey pages serve hosts at HITL_PUBLIC_URL: enroll a passkey, and confirm an
approval with it (docs/security.md "Step-up")."""
