// Messages of the billing pages, shared by the server (workers/services/billing.ts)
// and the browser (client-side validation): no server code may come in here.
export const PLAN_REQUIRED_MESSAGE = "Please select a plan before proceeding.";
export const ALREADY_ON_PLAN_MESSAGE = "You are already on this plan.";
export const PROVIDER_DOWN_MESSAGE = "We could not reach our payment provider. Please try again in a minute.";
export const NO_BILLING_ACCOUNT_MESSAGE = "There is no payment method on file yet. Choose a plan first.";
