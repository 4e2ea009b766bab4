// Cutting text to a length on a character boundary, for code that may not import app/shared (the adapters).
export { cutText } from "~/shared/text";
