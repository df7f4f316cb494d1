"""The console's roles (design §6), as Django groups created by a migration."""

SUPERVISOR = "supervisor"
OPERATOR = "operator"
SHIFT_LEAD = "shift lead"

ALL_ROLES = (SUPERVISOR, OPERATOR, SHIFT_LEAD)
