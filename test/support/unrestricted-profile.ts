/**
 * A profile with every tool and no approvals block, so a security test reaches the guard
 * it attacks (the sandbox, not the approval gate, which test/approvals.test.ts attacks).
 */
export const unrestrictedProfile = `---
id: test_admin
name: Test admin
max_iterations: 6
planning_enabled: false
tools: ["*"]
---
You administer.
`;
