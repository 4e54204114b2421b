"""Team tie-breaks and team standings (rules.md Section 9) on teams x rounds views of the team model."""
